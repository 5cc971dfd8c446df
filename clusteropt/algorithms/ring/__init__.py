"""Paper 004 (Räcke, Schmid, Zabrodin): online balanced partitioning of ring demands.

``state``      the process -> server map every algorithm shares, and its migration log;
``smoothmin``  the smooth minimum and its gradient (Appendix A), the CDF coupling rounding;
``hitting``    the line hitting game with interval growing (Sec. 4.1);
``mts``        line metrical task systems (a subpackage): work function, soft heuristic, the paper's HST one;
``dynamic``    the dynamic algorithm (Sec. 3): random-shift intervals, one MTS-driven cut each;
``static``     the static algorithm (Sec. 4.2): slicing, colour clusters, scheduling;
``baselines``  never migrate, best static contiguous arcs in hindsight, greedy cut moving;
``offline``    exact offline optima for tiny instances (dynamic programming), bounds on OPT_dyn at any size;
``swap_search`` an upper bound on OPT_dyn: swap-neighbourhood DP rounds from a feasible schedule.
"""
