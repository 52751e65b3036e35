"""semledger.adapters"""
