"""`python -m cli` runs the `perf-doctor` command line."""

from cli.main import main

raise SystemExit(main())
