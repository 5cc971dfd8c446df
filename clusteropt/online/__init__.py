"""The time-slotted online driver and the policies that decide each slot.

Policies follow the estimator habit (``__init__`` stores parameters, ``reset(instance)``,
``step(t, observation)``); the paper systems add the driver and their policies here.
"""
