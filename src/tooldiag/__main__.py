from tooldiag.cli.main import main

main()
