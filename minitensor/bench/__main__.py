"""Entry point for `python -m minitensor.bench`."""

from .cli import main

raise SystemExit(main())
