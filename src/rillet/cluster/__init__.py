"""Redis Cluster: node table, slots, nodes.conf and the cluster bus."""
