"""The job queue itself, which is the ``async_jobs`` table: enqueue (in its own or the caller's
transaction), claim, finish, and the plain records that describe jobs. No Qt.

It sits below ``services`` (which enqueue jobs inside their own transactions) and below ``jobs`` (the
processors, executor, recovery and runner that work through it).
"""
