"""The arrival test's critical values per group of newest runs and reference size: written by
measurements/arrival_critical_values.py, the largest of the quantiles over normal runs and over
heavy-tailed runs (t, 3 d.f.), 300,000 series each (stats/_arrival.py)."""

ARRIVAL_ALPHA = 0.0025
GROUPS = (1, 3)
FIRST_REFERENCE = 3
# runs in the group: critical values for references of FIRST_REFERENCE, FIRST_REFERENCE + 1, ... runs
CRITICAL = {
    1: (24.7523, 14.2610, 11.3521, 10.4557, 9.0940, 8.6891, 8.3401, 8.3149, 7.7646, 7.7041, 7.6149, 7.5716, 7.4127, 7.3377, 7.2350, 7.2316, 7.0472, 7.0601, 7.2064, 6.8854, 6.8139, 7.1185, 6.8385, 6.8922, 6.9400, 6.5860, 6.7568, 6.7498),
    3: (17.9310, 8.2622, 5.7695, 4.8864, 4.3702, 3.9875, 3.8227, 3.6627, 3.4916, 3.3576, 3.2452, 3.1403, 3.1388, 3.1033, 3.0292, 2.9271, 2.8630, 2.8940, 2.8669, 2.8256, 2.7928, 2.7362, 2.7190, 2.7013, 2.7066, 2.6792, 2.6985, 2.6912),
}
