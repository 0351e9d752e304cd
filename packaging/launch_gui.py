"""Entry script of the bundled ``san-desktop`` executable (packaging/san-desktop.spec): the GUI's entry point."""

import sys

from san_desktop.__main__ import main

sys.exit(main())
