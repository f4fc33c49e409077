"""The errors of a Spark write that the user's driver raises: a failed Spark job read back
from the text Spark reports (:func:`spark_job_error`), and an overwrite that published its
output but could not remove all of the older files (:class:`OverwriteIncompleteError`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from zerorename.errors import CommitError, StoreError

__all__ = ["WORKER_PYTHON_HINT", "OverwriteIncompleteError", "SparkJobError", "spark_job_error"]


class SparkJobError(CommitError):
    """A Spark write failed; the message leads with the worker's zerorename error, if any.

    Spark reports a failure in a Python worker as text: its own headline, the worker's
    traceback, then the JVM's stack — the cause is the last Python line of a few thousand
    characters.  Only that text crosses the JVM, so it is read once, here, at the boundary:
    ``cause_type`` is the qualified name of the worker's exception (``None`` when the text
    names none) and ``spark_error`` is Spark's exception, whole.
    """

    def __init__(self, path: str, reason: str, *, cause_type: str | None,
                 spark_error: BaseException) -> None:
        super().__init__(path, reason)
        self.cause_type = cause_type
        self.spark_error = spark_error


class OverwriteIncompleteError(CommitError):
    """A write with ``mode="overwrite"`` published its output, but older files it was to
    replace could not all be deleted: they are still visible beside the new output.

    Not a failed job — the new output and its ``_SUCCESS`` are in place, and an abort that
    follows removes nothing of it — but not the overwrite asked for either, so it is raised
    rather than logged.  ``left`` lists the older files still there (or, when the store did
    not say which deletes failed, every file that was to go); deleting them, or writing
    again with ``mode="overwrite"``, completes the replacement.
    """

    def __init__(self, path: str, job_id: str, left: Sequence[str],
                 cause: StoreError) -> None:
        shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
        super().__init__(path, f"job {job_id} published its output, but {len(left)} older "
                         f"file(s) it was to replace are still there ({shown}): {cause.reason}."
                         " Delete them, or write again with mode='overwrite'")
        self.job_id = job_id
        self.left = list(left)
        self.cause = cause


#: A Python exception line in a traceback: ``package.module.SomeError: message``.
_PYTHON_ERROR_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:Error|Exception|Fault))"
    r"(?::[ ]?(?P<message>.*))?$")
#: Any line naming an exception class (Spark's headline: ``: java.lang.OutOfMemoryError: …``).
_NAMES_AN_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception)\b")


#: ``No module named 'zerorename'`` (or ``'pyarrow'``…) in a worker: the worker's Python is
#: not the one zerorename is installed in.
_MISSING_MODULE = re.compile(r"No module named '(?P<module>zerorename|pyarrow|pandas)[.']")
WORKER_PYTHON_HINT = (
    "the Python workers run an interpreter without zerorename: Spark starts them with "
    "PYSPARK_PYTHON (default: python3 on PATH), not the driver's Python.  Set PYSPARK_PYTHON "
    "(and PYSPARK_DRIVER_PYTHON) to a Python where zerorename[spark] is installed before the "
    "session starts, or ship it to the executors (docs/user/spark.md, \"Shipping it to a "
    "cluster's executors\")")


def _hint(text: str) -> str:
    """Advice for a worker error whose fix is outside zerorename (empty when none)."""
    if "ModuleNotFoundError" in text and _MISSING_MODULE.search(text):
        return f" — {WORKER_PYTHON_HINT}"
    return ""


def spark_job_error(dest: str, error: BaseException) -> SparkJobError:
    """The :class:`SparkJobError` for ``error``, a failed Spark write into ``dest``.

    The cause is the last traceback line naming a ``zerorename`` exception (the worker's
    own error; Spark's wrappers come after it); failing that, the last Python exception line
    of the worker's traceback; failing that, Spark's first line that names an exception.
    """
    lines = [line.strip() for line in str(error).splitlines()]
    found = [(m["type"], m["message"] or "") for m in map(_PYTHON_ERROR_LINE.match, lines)
             if m is not None]
    own = [f for f in found if f[0].startswith("zerorename.")]
    python = [f for f in found if not f[0].startswith(("java.", "org.apache.", "scala."))]
    if own or ("Traceback (most recent call last)" in str(error) and python):
        cause_type, message = (own or python)[-1]
        short = cause_type.rsplit(".", 1)[-1]
        return SparkJobError(dest, f"{short}: {message}{_hint(str(error))}",
                             cause_type=cause_type, spark_error=error)
    headline = next((line for line in lines if _NAMES_AN_EXCEPTION.search(line)),
                    next((line for line in lines if line), type(error).__name__))
    return SparkJobError(dest, f"the Spark job failed: {headline.lstrip(': ')[:500]}"
                         f"{_hint(str(error))}",
                         cause_type=None, spark_error=error)
