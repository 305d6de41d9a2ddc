"""python -m depthwidth"""
from .cli import main

main()
