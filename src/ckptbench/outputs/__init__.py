"""outputs"""

from ckptbench.outputs._baseline import (
    build_baseline,
    capture_baseline,
    load_baseline,
    measured_records,
    read_manifest,
    resolve_label,
)
from ckptbench.outputs._comparison import (
    Comparison,
    ComparisonRow,
    compare_documents,
    compare_to_baseline,
    print_comparison,
)
from ckptbench.outputs._run_baselines import finish_baselines
