from xcindex.cli import main

raise SystemExit(main())
