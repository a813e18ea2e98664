from karpy.cli import main

main()
