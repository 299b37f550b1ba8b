from replicate.cli.app import main

main()
