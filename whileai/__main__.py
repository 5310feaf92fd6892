from whileai.cli import main

main()
