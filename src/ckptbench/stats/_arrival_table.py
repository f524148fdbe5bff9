"""The arrival test's critical values per group of newest runs and reference size: written by
measurements/arrival_critical_values.py, the largest of the (1 - GROUP_ALPHAS) quantiles over normal
runs and over heavy-tailed runs (t, 3 d.f.), 300,000 series each (stats/_arrival.py)."""

GROUP_ALPHAS = {1: 0.005, 3: 0.001}
FIRST_REFERENCE = 3
# runs in the group: critical values for references of FIRST_REFERENCE, FIRST_REFERENCE + 1, ... runs
CRITICAL = {
    1: (12.1516, 7.9308, 6.5733, 5.9711, 5.5616, 5.3428, 5.1220, 5.0348, 4.7562, 4.7950, 4.6682, 4.6239, 4.5527, 4.5317, 4.4604, 4.4854, 4.4567, 4.3735, 4.3417, 4.3258, 4.2289, 4.3231, 4.2527, 4.2153, 4.1217, 4.1336, 4.1469, 4.1204),
    3: (19.8914, 8.8408, 6.2463, 5.1848, 4.5965, 4.1819, 4.0232, 3.8252, 3.6700, 3.5326, 3.4085, 3.2400, 3.2774, 3.2530, 3.1942, 3.0527, 3.0020, 3.0111, 3.0175, 2.9621, 2.9422, 2.8507, 2.8412, 2.8308, 2.8540, 2.8357, 2.8189, 2.8159),
}
