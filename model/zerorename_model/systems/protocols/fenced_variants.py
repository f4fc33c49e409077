"""The variants of the fenced committer (:mod:`~zerorename_model.systems.protocols.fenced`),
each registered under ``fenced+<variant>``: the protocol with one piece taken out or put back, to
show by exploration what that piece prevents, and the protocol the JVM ``fenced`` follows under
Spark's protocol (``fenced+messages``) with the candidates explored beside it.

* ``fenced+no-fence``: plain PUTs; it shows the condition is what excludes a partitioned
  attempt's output.
* ``fenced+top-level-cleanup`` (issue 31), ``fenced+no-landed-check`` (issue 34),
  ``fenced+XIV.C.1`` (the paper's Section XIV.C.1): production bugs put back.
* ``fenced+messages``: ``zerorename.fenced.task-records=messages`` by default (Spark's
  protocol: no request at task commit).  ``fenced+messages+put`` keeps the task record's PUT,
  ``fenced+messages+get`` the fence GET and ``fenced+messages+late-get`` the fence GET of a task
  commit that uploaded, ``fenced+messages+put+late-get`` both (the candidates between the two;
  docs/research/fenced-spark-messages.md).  ``fenced+messages+no-driver-abort`` is
  ``fenced+messages`` whose driver keeps no message (abort then leaves a committed task's
  uploads while another job is active).
* ``fenced+<rule>`` and ``fenced+messages+<rule>`` for each value of
  ``zerorename.fenced.complete`` (:mod:`~zerorename_model.systems.protocols.fenced_complete`):
  ``fenced+overwrite`` and ``fenced+messages+overwrite`` are the model's ``fenced`` and
  ``fenced+messages`` as they were until session 24; ``+check-first`` is the default's own name.

Every variant takes the default rule (``check-first``) unless it is a ``+<rule>`` variant.
"""

from __future__ import annotations

from zerorename_model.systems.protocols import register
from zerorename_model.systems.protocols.common import join, list_children
from zerorename_model.systems.protocols.fenced import FENCE_DIR, FencedCommitter
from zerorename_model.systems.protocols.fenced_complete import VARIANT_RULES, with_rule
from zerorename_model.systems.protocols.retrying import Retry

__all__ = ["MessagesFencedCommitter", "MessagesGetFencedCommitter",
           "MessagesLateGetFencedCommitter", "MessagesNoDriverAbortFencedCommitter",
           "MessagesPutFencedCommitter", "MessagesPutLateGetFencedCommitter",
           "SweepingFencedCommitter", "TopLevelFencedCommitter", "UnfencedCommitter",
           "UnrecognisingFencedCommitter"]


@register("fenced+no-fence", supports_recovery=True)
class UnfencedCommitter(FencedCommitter):
    """The same protocol with plain PUTs: the last record written wins (Section VIII.C)."""

    fenced = False


@register("fenced+top-level-cleanup", supports_recovery=True)
class TopLevelFencedCommitter(FencedCommitter):
    """The cleanup the reference shipped until issue 31: "no other job is active" read from
    the destination's own record area only (``dest/_fenced/*/active``), so a job writing a
    partition of this job's table (``dest/date=1``) looks absent and its uploads are aborted
    as strays."""

    def other_job_active(self) -> bool:
        _files, jobs = list_children(self.fs, join(self.dest, FENCE_DIR))
        return any(self.fs.head(join(job, "active")) is not None
                   for job in jobs if job != self.record_dir)


@register("fenced+no-landed-check", supports_recovery=True)
class UnrecognisingFencedCommitter(FencedCommitter):
    """The retry loop without its landed checks, and a committer that does not recognise its
    own records: a repeated request that meets its own earlier success is taken for someone
    else's (a task record PUT whose answer was lost answers 412 to its own write, and the task
    gives its output up; a complete whose answer was lost answers NoSuchUpload, and the job
    fails after its commit point).  It shows why the checks are needed (issue 34)."""

    retry = Retry(landed=False)
    recognises_own = False


@register("fenced+XIV.C.1", supports_recovery=True)
class SweepingFencedCommitter(FencedCommitter):
    """Cleanup aborts every pending upload under the destination, a concurrent job's too: the
    bug of the paper's Section XIV.C.1, put back to show what the marker check prevents."""

    def other_job_active(self) -> bool:
        return False


@register("fenced+messages", supports_recovery=True)
class MessagesFencedCommitter(FencedCommitter):
    """``zerorename.fenced.task-records=messages`` by default: no request at task commit."""

    task_records_default = "messages"


@register("fenced+messages+no-driver-abort", supports_recovery=True)
class MessagesNoDriverAbortFencedCommitter(MessagesFencedCommitter):
    """``fenced+messages`` as first explored: the driver keeps no accepted message, so abort
    cannot attribute a committed task's uploads while another job is active."""

    keeps_accepted = False


@register("fenced+messages+put", supports_recovery=True)
class MessagesPutFencedCommitter(MessagesFencedCommitter):
    """A candidate: messages, but the task commit still PUTs its record (no fence GET)."""

    keeps_record_put = True


@register("fenced+messages+get", supports_recovery=True)
class MessagesGetFencedCommitter(MessagesFencedCommitter):
    """A candidate: messages, but the task commit still reads the job commit record (the
    fence GET; no task record PUT)."""

    keeps_fence_get = True


@register("fenced+messages+late-get", supports_recovery=True)
class MessagesLateGetFencedCommitter(MessagesFencedCommitter):
    """A candidate: messages, with the fence GET only in a task commit that uploaded staged
    files (every other upload precedes Spark's commit coordinator's answer, so the job's
    cleanup lists it)."""

    keeps_late_fence_get = True


@register("fenced+messages+put+late-get", supports_recovery=True)
class MessagesPutLateGetFencedCommitter(MessagesLateGetFencedCommitter):
    """A candidate: the task record's PUT kept (abort can name the committed tasks' uploads),
    the fence GET only in a task commit that uploaded."""

    keeps_record_put = True


for _base, _name in ((FencedCommitter, "fenced"), (MessagesFencedCommitter, "fenced+messages")):
    for _rule in VARIANT_RULES:  # fenced+if-none-match, fenced+messages+check-first, ...
        register(f"{_name}+{_rule}", supports_recovery=True)(with_rule(_base, _rule))
