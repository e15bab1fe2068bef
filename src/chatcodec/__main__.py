"""``python -m chatcodec`` runs the command line."""

from chatcodec.cli import main

raise SystemExit(main())
