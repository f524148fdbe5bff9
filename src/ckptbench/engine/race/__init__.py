"""`ckptbench tune`: what a race is for, its rounds, and the answer it gives."""
