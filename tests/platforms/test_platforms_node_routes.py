"""`batloc platform generate --node-routes`: a route between every two nodes' memories, nothing else changed."""

from batloc.platforms.generator import PlatformSpec, render


def test_node_routes_join_every_pair_of_nodes_over_both_links_and_add_nothing_else():
    spec = PlatformSpec(memory_mix=((3, 1e9),), cores=2)
    plain = render(spec).splitlines()
    routed = render(PlatformSpec(memory_mix=((3, 1e9),), cores=2, node_routes=True)).splitlines()
    extra = [line for line in routed if line not in plain]
    assert extra == [
        '    <zoneRoute src="n000" dst="n001" gw_src="n000_mem" gw_dst="n001_mem"><link_ctn id="n000_link"/>'
        '<link_ctn id="n001_link"/></zoneRoute>',
        '    <zoneRoute src="n000" dst="n002" gw_src="n000_mem" gw_dst="n002_mem"><link_ctn id="n000_link"/>'
        '<link_ctn id="n002_link"/></zoneRoute>',
        '    <zoneRoute src="n001" dst="n002" gw_src="n001_mem" gw_dst="n002_mem"><link_ctn id="n001_link"/>'
        '<link_ctn id="n002_link"/></zoneRoute>']
    assert [line for line in routed if line in plain] == plain
