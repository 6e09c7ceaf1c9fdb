from desktop.launch import main

main()
