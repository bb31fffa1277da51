"""
Renderings of workloads for tools other than the fixture consumers.

`balgen export spamoor` (`balgen.commands.export`) turns every planned workload into a
spamoor configuration for live devnets. The modules follow the export's
steps: the workload's transactions in chain order (`chain_order`), who owns
each address they name (`addresses`), which transactions depend on which
(`dependencies`), one replay-eest payload per dependency group (`spamoor_payloads`),
what spamoor keeps of the workload's shape (`shape`), the spammer entry that
runs the payloads (`spammer`), the YAML text (`yaml_text`), the whole export
(`spamoor_export`) and the folder it lands in (`folder`); `unexportable` is
the one error a workload spamoor cannot run raises.
"""
