"""Entry script of the bundled ``san-desktop`` executable (packaging/san-desktop.spec): the GUI's entry point."""

import multiprocessing
import sys

from san_desktop.__main__ import main

if __name__ == "__main__":
    # the embedded AI's child process is this executable started again (ai/own_process.py): this makes it
    # run the child's work instead of a second window
    multiprocessing.freeze_support()
    sys.exit(main())
