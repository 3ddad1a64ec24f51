# Count the lines of each Python file given on the command line.
import sys

for name in sys.argv[1:]:
    with open(name, encoding="utf-8") as handle:
        print(name, sum(1 for _ in handle))
