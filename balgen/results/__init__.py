"""
What a replay run produces and how runs are compared.

The `results.json` schema (`schema`), the measurements of each execution
and their statistics (`measurements`), confidence intervals of medians and
of changes (`confidence`), how many executions a test gets
(`repeat_policy`), which tests changed between runs (`significance`), the
comparison of several runs (`comparison`), the phases a change is in (`phases`)
and the rejection times (`rejection_times`); `balgen report` (`balgen.commands.report`)
prints and draws it.
"""
