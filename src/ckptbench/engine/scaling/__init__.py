"""`ckptbench scale`: one suite at several host counts, and the model that predicts larger counts."""
