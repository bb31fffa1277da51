"""
balgen's fillers, one pytest module per workload family.

They stay in `fillers/` at the top of the checkout and ship inside the
package as `balgen.fillers`, so that an installed balgen fills without a
checkout (`balgen.fill.plugin.filler_folder`).
"""
