"""Use cases (plain functions and classes, no Qt): the GUI, the command line and the jobs call these."""
