from xcindex.cli.main import main

raise SystemExit(main())
