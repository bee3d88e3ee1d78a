"""rillet.pipelines: jobs built on the Spark connector (demo, archive, ingest) and their CLI.

Each pipeline module owns its arguments (`add_arguments`) and its run (`run(args)`);
`cli.main(argv)` dispatches. `servers` starts embedded/reference servers for them.
"""
