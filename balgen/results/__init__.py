"""
What a replay run produces and how runs are compared.

The `results.json` schema (`results`), the measurements of each execution
and their statistics (`measurements`), confidence intervals of medians and
of changes (`confidence`), how many executions a test gets
(`repeat_policy`), which tests changed between runs (`significance`), the
comparison of several runs (`comparison`) and `balgen report`, which prints
and draws it (`report`).
"""
