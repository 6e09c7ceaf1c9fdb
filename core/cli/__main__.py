"""``python3 -m core.cli COMMAND ...``: the headless subcommands, as ``prplanner COMMAND``
runs them (without the desktop launcher, so never Qt)."""

import sys

from core.cli import main

if __name__ == "__main__":  # importing the module (walking the package) runs nothing
    sys.exit(main())
