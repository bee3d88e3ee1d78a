from rillet.cli import main

raise SystemExit(main())
