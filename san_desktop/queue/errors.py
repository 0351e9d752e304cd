"""What the queue raises, and the signals a processor's run uses to leave it early."""

from __future__ import annotations

from san_desktop.core.enums import JobType
from san_desktop.core.errors import SanError


class DuplicateJobError(SanError):
    """A job of this type for this target is already waiting or running."""

    def __init__(self, job_type: JobType, target_id: str, existing_job_id: str) -> None:
        super().__init__(
            f"A {job_type.value} job for {target_id} is already waiting or running (job {existing_job_id})."
        )
        self.job_type = job_type
        self.target_id = target_id
        self.existing_job_id = existing_job_id


class JobNotFoundError(SanError):
    exit_code = 5

    def __init__(self, job_id: str) -> None:
        super().__init__(f"There is no job with id {job_id}.")
        self.job_id = job_id


class JobStateError(SanError):
    """The requested action does not fit the job's current state."""


class JobCancelledError(Exception):
    """Raised inside a processor when the user cancelled its job; not an error."""


class JobInterruptedError(Exception):
    """Raised inside a processor when the app is shutting down: the job goes back to the queue."""


class JobSupersededError(Exception):
    """The job is no longer this attempt's (cancelled, recovered, re-run): its result is dropped."""
