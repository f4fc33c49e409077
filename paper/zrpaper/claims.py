"""The paper's side of each comparison, and the prose that explains a disagreement.

What the zero-rename paper claims about cells of the matrix (:data:`PAPER_CLAIMS`) and why the
model can differ (:data:`CLAIM_EXPLANATIONS`, :data:`TABLEV_EXPLANATIONS`): typed by hand after
reading the witness traces.  Whether a claim agrees is never written here; it is computed from
the results when the paper is rendered."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """What the paper (or the Hadoop document it cites) says about some cells of the matrix.

    Only the paper's side: whether our verdicts agree is computed from the results."""

    key: str
    section: str
    quote: str
    committers: tuple[str, ...]
    stores: tuple[str, ...]
    props: tuple[str, ...]
    expected: str  # "holds" or "violated"


PAPER_CLAIMS: tuple[Claim, ...] = (
    Claim("v1-hdfs", "VIII.B",
          "As the v1 algorithm satisfies the completeness and exclusivity requirements",
          ("v1",), ("hdfs",), ("completeness", "exclusivity"), "holds"),
    Claim("staging", "VIII.B",
          "the commitment of upload data has the same correctness as the v1 commit algorithm on "
          "a consistent HDFS filesystem [...] there is no requirement for a consistent view of "
          "the object store during the actual job",
          ("directory", "partitioned"), ("s3-2018", "s3"),
          ("completeness", "exclusivity", "consistency"), "holds"),
    Claim("magic", "VIII.C, XII.B",
          "All pending uploads written by a committed task attempt must be included [...] No "
          "pending uploads by a failed task attempt must be included [...] partitioned task "
          "attempts will never make changes to the visible file set",
          ("magic",), ("s3",), ("completeness", "exclusivity", "continuity"), "holds"),
    Claim("magic-listing", "VIII.C",
          "[the magic committer] depends on consistent directory listings of the object stores",
          ("magic",), ("s3-2018",), ("consistency",), "violated"),
    Claim("abort", "VIII.C",
          "the fact that all writes are not manifest until job commit means that the any writes "
          "from failed tasks will remain \"pending\" [...] lists all outstanding uploads against "
          "the destination directory and cancels them",
          ("magic", "directory", "partitioned"), ("s3",), ("abortability",), "holds"),
    Claim("concurrency", "VIII.D",
          "listing and cancelling pending work in the directory /output/dataset1, would also "
          "delete the output in /output/dataset10 [...] this was found before the product "
          "shipped", ("magic", "directory", "partitioned"), ("s3",), ("concurrency",), "holds"),
    Claim("manifest", "manifest committer document (seed 004)",
          "a committer for work which provides performance on ABFS for \"real world\" queries, "
          "and performance and correctness on GCS",
          ("manifest",), ("gcs", "abfs"), ("completeness", "exclusivity"), "holds"),
    Claim("direct", "XII.A",
          "the committer was still not resilient to failure: a failed task could not be "
          "repeated, as its output was unknown",
          ("direct",), ("s3",), ("exclusivity",), "violated"),
    Claim("stocator-failures", "XII.B",
          "every remapped file is given a name which inserted the job and task attempt IDs [...] "
          "Failed and aborted tasks and jobs can then be cleaned up by their successors",
          ("stocator",), ("s3",), ("exclusivity",), "holds"),
    Claim("stocator", "XII.B",
          "It does however, fail to meet our requirement \"Continuity of correctness.\"",
          ("stocator",), ("s3",), ("continuity",), "violated"),
    Claim("emr", "XII.C",
          "the operation may fail partway through, which will trigger a new task attempt, which "
          "will then commit its work into a destination of unknown state",
          ("emr",), ("s3",), ("exclusivity",), "violated"),
)

#: Why a claim and our verdicts can differ; shown only for a claim that does differ (a
#: difference without an entry here is shown as unexplained).
CLAIM_EXPLANATIONS: dict[str, str] = {
    "v1-hdfs": (
        "This is the race of Section VIII.C and XIV.A.1, and v1 has it too, as XIV.A.1 says. "
        "Under Hadoop's protocol the job commit is not told which attempts the driver accepted: "
        "it lists the store. An attempt that is partitioned after it was granted its commit "
        "keeps running; the driver launches a second attempt and accepts it; the first one then "
        "finishes its task commit late and replaces the committed task directory (v1 deletes "
        "it before its rename, exactly the behaviour XIV.A.1 describes). The job commit promotes "
        "the output of an attempt the driver considers failed. The paper argues that \"the "
        "pending set from either attempt must constitute a valid result of a task\"; our "
        "completeness and exclusivity follow the definition of VIII.A with the driver's view of "
        "which attempt committed, and so count it. See the protocol table below: v1 ignores the "
        "attempts Spark passes to the job commit, so Spark's protocol does not help it."),
    "staging": (
        "The staging committers propagate task output through the cluster filesystem with the "
        "v1 algorithm, and inherit v1's race (previous entry): under Hadoop's protocol a "
        "partitioned attempt's late `.pendingset` replaces the accepted attempt's, and the job "
        "completes the partitioned attempt's uploads. Under Spark's protocol the job commit uses "
        "the accepted attempts' messages (the protocol table below), which is what VIII.C "
        "suggests: \"this process could be improved were the job commit operation supplied with "
        "a list of successful task attempts\"."),
    "magic": (
        "The race VIII.C describes: \"a task attempt partitioned from the Job Manager during "
        "task commit can still complete its PUT of its list of uploads to commit, the pending "
        "set, overwriting that of the task attempt which had considered itself successful\". "
        "The paper accepts either attempt's output as valid; our checkers, which know which "
        "attempt the driver accepted, report the substitution. Under Spark's protocol the job "
        "commit takes the pending sets from the accepted attempts' messages, and no schedule "
        "of the scope explored shows a substitution (protocol table below)."),
    "manifest": (
        "The manifest committer loads the task manifests it finds in the job attempt directory "
        "and ignores what Spark passes to the job commit, so a partitioned attempt that saves "
        "its manifest after the accepted attempt did replaces it under either protocol: the "
        "same race as v1 (protocol table below)."),
    "stocator-failures": (
        "Stocator writes every file straight into the destination under an attempt-specific "
        "name. Under Hadoop's protocol its job commit is told nothing, lists the destination, "
        "and cannot tell the file of an attempt that crashed before its task commit from the "
        "file of the attempt that replaced it, so it keeps both: a reader listing the directory "
        "sees two versions of the same part. Under Spark's protocol the job commit deletes the "
        "files of attempts that are not in the messages. The paper leaves such files to be "
        "\"cleaned up by their successors\": until a later job does, the committed "
        "destination holds the failed attempt's output."),
}


#: Why the model can disagree with the paper on a Table V cell, written after reading the
#: witness runs (``paper/make_tablev.py``'s notes and the paper's Section 5).  Used only for
#: cells where compare() reports a difference; a difference without an entry here is printed as
#: unexplained, and an entry without a difference is not printed.
TABLEV_NOTES: dict[tuple[str, str], str] = {
    ("direct", "abortable_job"): (
        "Direct writes every file straight to its final name and keeps no record of what it "
        "wrote, so its job abort deletes nothing: when the driver gives up after a task "
        "finished, that task's files stay visible. The paper marks Direct as abortable without "
        "naming a mechanism; the only one available (deleting the destination) would also "
        "destroy data that was there before the job."),
    ("stocator", "speculative_tasks"): (
        "Stocator makes output visible as it is written. A speculative attempt that lost the "
        "race but has not yet been stopped writes its attempt-named file after the job commit "
        "listed the destination, so the committed destination holds it until the loser is told "
        "to abort and deletes it. The paper counts Stocator's output as the files its _SUCCESS "
        "manifest names (which exclude the loser); the model observes the destination as a "
        "reader listing the directory does. This is the paper's own continuity objection to "
        "Stocator, reached through speculation rather than a partition."),
    ("emr", "abortable_job"): (
        "EMR completes its uploads in task commit, so once a task has committed its files are "
        "visible, and the job abort can only abort incomplete uploads: a job aborted after a "
        "task committed leaves that task's output in the destination. The paper marks EMR's "
        "job as abortable although its own text notes that committed task output is visible."),
}

#: Table V differences only the paper explains (``paper/make_tablev.py`` prints them unexplained).
TABLEV_EXPLANATIONS: dict[tuple[str, str], str] = {
    ("stocator", "abortable_job"): (
        "Stocator's job abort deletes the job's attempt-named files that it can list. A task "
        "attempt still running when the driver gives up writes straight into the destination; "
        "when its write lands after the abort's listing, nothing deletes it. The paper's "
        "argument is that failed and aborted work \"can then be cleaned up by their "
        "successors\": by a later job, not by this job's abort."),
}


def tablev_explanations() -> dict[tuple[str, str], str]:
    return {**TABLEV_NOTES, **TABLEV_EXPLANATIONS}

