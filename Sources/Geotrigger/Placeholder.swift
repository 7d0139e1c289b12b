// Geotrigger
