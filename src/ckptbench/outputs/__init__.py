"""outputs"""

from ckptbench.outputs._baseline import (
    build_baseline,
    capture_baseline,
    load_baseline,
    read_manifest,
    read_results,
    resolve_label,
)
from ckptbench.outputs._comparison import (
    Comparison,
    ComparisonRow,
    compare_documents,
    compare_to_baseline,
    print_comparison,
)
