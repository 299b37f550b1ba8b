from replicate.cli.entry import main

main()
