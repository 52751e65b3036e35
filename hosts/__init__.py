"""semledger.hosts"""
