"""The seats no person fills: the turn timers and the AI players."""
