import sys

from fairmon.cli import main

sys.exit(main())
