"""Entry script of the bundled ``san`` executable (packaging/san-desktop.spec): the command line's entry point."""

import sys

from san_desktop.cli.main import main

sys.exit(main())
