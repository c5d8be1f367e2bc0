# The README's commands, for those who reach for make.
.PHONY: demo test bench bench-all

demo:
	./scripts/demo

test:
	./scripts/test

bench:
	./scripts/bench

bench-all:
	./scripts/bench --scales S,M,L
