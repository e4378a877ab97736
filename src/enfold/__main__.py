from enfold.cli import main

main()
