import sys

from loopwright.cli import main

sys.exit(main())
