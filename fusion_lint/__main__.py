from fusion_lint.cli import main

main()
