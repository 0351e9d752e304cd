"""The ``san`` command line: thin over the services, no logic of its own."""
