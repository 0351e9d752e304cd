"""Entry script of the bundled ``san`` executable (packaging/san-desktop.spec): the command line's entry point."""

import multiprocessing
import sys

from san_desktop.cli.main import main

if __name__ == "__main__":
    # a page's article is read in a child process (web/page_reader.py, for `san jobs run`'s page fetches), and
    # that child is this executable started again: this makes it run the child's work instead of a command
    multiprocessing.freeze_support()
    sys.exit(main())
