"""The paper's mathematics (Levine et al. 2020, "Limits to Depth Efficiencies of Self-Attention").

Holds the shape (L, d, H) and its 12·L·d² count (``shapes``), the threshold, regimes and the
Theorem 1/2 separation-rank bounds (``separation``), exact signs of bound differences
(``exact``), the Corollary 1/2 widths (``solver``), two networks against each other built on them
(``comparison``: equiv and compare) and certified ranks of small networks
(``certify``, computed exactly mod p by ``gridrank``). Imports nothing of depthwidth but the base
package ``core`` (errors, records, the scalar/array switch): no empirical rule, no hardware.
"""
