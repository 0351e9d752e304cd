"""Run-scoped files (DESIGN.md §4, seed 003): every file a run writes carries the run's id, is written
atomically, and is deleted by that run alone if the run does not publish it. No Qt, no database."""
