import sys

from semledger._cli import main

sys.exit(main())
