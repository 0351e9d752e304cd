"""The job queue itself, which is the ``async_jobs`` table: the job store (``store.JobStore``: enqueue in its own
or the caller's transaction, claim, finish, retry, cancel, recover, prune, delete), its status table, and the
plain records that describe jobs. No Qt, and no SQL: that is each database's jobs driver (``db.backends``).

It sits below ``services`` (which enqueue jobs inside their own transactions) and below ``jobs`` (the
processors, executor, recovery and runner that work through it).
"""
