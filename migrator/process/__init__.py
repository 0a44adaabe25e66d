"""Starting helper processes: the one way ``migrate`` runs another program (a formatter, hipify,
a compiler, git, a probe of an interpreter, a fleet unit, verify's smoke command), isolated from
the project it reads. Nothing here knows about CUDA or rules."""
