"""Background jobs: queue (enqueue, claim, finish), processors, recovery (no Qt) and the Qt runner."""
